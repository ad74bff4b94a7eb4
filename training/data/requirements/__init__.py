"""The data prompts with verifiable requirements are made of (base tasks, phrasing templates
per check kind, word pools, as package data), its fixed train/held-out split, the rules on
which requirements may stand together, and drawing and saying a requirement's parameters."""
