"""One screen per module: each holds its state and does its I/O in workers."""
