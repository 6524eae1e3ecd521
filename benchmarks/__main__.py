"""``python -m benchmarks``: the noise samplers' throughput, then one table of every registry
algorithm's fit time and peak memory.

See :mod:`benchmarks.noise_speed` and :mod:`benchmarks.registry_speed` for what is measured and the flags
(``--sizes``, ``--algorithms``, ``--timeout-per-fit``, ...).  The paper reproductions are
separate scripts in this folder (``python -m benchmarks.su2016_figure1`` and so on).
"""
from benchmarks import noise_speed
from benchmarks.registry_speed import main

if __name__ == "__main__":
    noise_speed.main([])
    print()
    main()
