"""The flywheel's DPO stage: pairs from the policy's own samples (`contrast`) and the rounds
that sample, pair, train and measure on the dev split (`rounds`)."""
