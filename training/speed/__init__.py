"""How fast the trainer runs on the hardware it finds: the batch the free GPU memory holds
(`memory`), the kernels and attention that are installed (`kernels`), batches of like lengths
(`lengths`), GSPO's generation settings (`generation`) and where a step's time goes (`timing`).

Every choice made here is reported in a stage's `summary.speed`; what only a GPU changes is
chosen only where CUDA is present, so the CPU runs exactly as it did.
"""
