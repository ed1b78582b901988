"""One module per memory strategy, each behind ``cmi_inspect.strategy.MemoryStrategy``."""
