"""The flywheel in one command (`python -m training.distill flywheel`): generated prompts with
verifiable requirements → loops recorded by `redraft serve` → export → SFT → GSPO with the
checks reward → base and trained served and evaluated on held-out prompts → report."""
