"""The loop's commands: `slmactor metrics ...` (`metrics`), the replays they and the demo run
(`replay_driver`), and `slmactor demo` (`demo`).
"""
