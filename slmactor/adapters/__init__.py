"""Adapters that bring slmactor to a harness in that harness's own terms: an MCP server
(`mcp_server`) today. They talk to the daemon only through `slmactor.client` and the protocol;
they never import the runtime, the actors or the stores.
"""
