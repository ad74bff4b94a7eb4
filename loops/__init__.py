"""The MRPO controller (Writer-R1, Algorithm 1): draft, evaluate, reflect, rewrite, keep the
best."""
