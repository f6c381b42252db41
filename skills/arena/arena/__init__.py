"""The arena engine, one module per concern; bracket.py beside this folder is its command.

Imports flow one way, from the command line down to the pure core:
cli -> decision -> schedule, briefs -> outputs -> storage -> state -> pairing, cards, jobs -> base.
report reads a finished or running state and sits beside cli. docs/architecture.md has the map.
"""
