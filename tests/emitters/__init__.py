"""Emitters nobody here wrote, run as their users run them, each from a folder of its own: the
Vercel AI SDK under node in vercel/ (a committed package.json, package-lock.json and the script
node runs; npm.py installs them once into a cache), and the others beside it."""
