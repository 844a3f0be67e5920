"""`slmactor memory ...`: episodes and recall (`episodes`), facts, lessons and the memory block
(`facts`), working memory (`working`).
"""
