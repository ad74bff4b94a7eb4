"""HTTP plumbing: auth, limits, body limit, errors, logs, metrics, health routes."""
