"""The admin surface: memory and loop admin routes, the memory admin service, the UI."""
