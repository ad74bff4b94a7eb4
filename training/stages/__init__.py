"""The training stages (SFT, GSPO, DPO, ProcessBench, the pipeline) and their reports."""
