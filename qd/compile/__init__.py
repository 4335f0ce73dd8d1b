"""The compile driver: from a specialisation key to a launchable variant, through the memory
and disk caches or the frontend, the pruning analysis, codegen and a target.
"""
