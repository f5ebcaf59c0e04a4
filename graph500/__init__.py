"""Graph500 benchmark pieces, reference-identical: generator, root sampler, validator, statistics."""
