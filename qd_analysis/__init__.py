"""The static analyzer: fact export, Datalog engines, the pruning plan and explanations."""
