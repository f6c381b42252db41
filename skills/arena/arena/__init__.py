"""The arena engine, one module per concern; bracket.py beside this folder is its command.

Imports flow one way, from the command line down to the ground floor (base.py); the
layer of every module, and what each owns, is the table in docs/architecture.md (in the
repository), which the tests check every import against. The run's state is plain data
whose keys docs/state.md lists.
"""
