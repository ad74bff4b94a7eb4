"""Recorded loops to datasets: reading the store, rows, export, selection, think format."""
