"""Long-term semantic and procedural memory: facts (`facts`) and their distillation from episodes
(`distill`), lessons (`lessons`), procedures (`procedures`) and the memory block a role receives
(`block`).

May import: text, recall.
"""
