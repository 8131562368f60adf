"""Widgets render what they are given and post messages up; they never call the API."""
