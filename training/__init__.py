"""The offline trainer, `python -m training.distill`: recorded loops to SFT and GSPO checkpoints.

Not built yet; it comes with its own issue. The loop records it will read are complete today
(`store.records.LoopRecord`: request, checklist, every candidate with scores, evidence and the
reflection that produced it, usage and timings).
"""
