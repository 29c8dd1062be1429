"""Training-step measurements of the zoo networks (forward / backward / optimizer) on one GPU.

`measure` imports torch lazily; its option parsing and summary table work without it.
"""
