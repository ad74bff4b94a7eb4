"""Start-up probes of what `evaluation: auto` may ask a model: cases whose right outcome is
known by construction, run once per model, their result kept beside the database (`status`).
The judge's probe lives with the judges (`loops.judges.calibration`); the reviser's here
(`reviser`)."""
