"""What every tofino-cc package may import: the registry of programs
(registry.py) and the one YAML reader (safe_yaml.py). It imports nothing of
the project, so no package has to import upward to use it.
"""
