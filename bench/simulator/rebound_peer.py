"""REBOUND (IAS15, WHFast) on the same outer-solar-system initial conditions as bench_simulator.

Reads the JSON written by `bench_simulator outer N R ic.json` and prints one JSON object per integrator:
relative energy error at the end and median wall time of `repeats` runs (one core).
"""
import json
import statistics
import sys
import time

import rebound


def run(ic, integrator, dt=None):
    sim = rebound.Simulation()
    sim.G = ic["G"]
    n = len(ic["mass"])
    # orbitlaw puts the star last; REBOUND's WHFast (Jacobi coordinates) needs the central body first.
    for b in [n - 1] + list(range(n - 1)):
        x = ic["position"][3 * b:3 * b + 3]
        v = ic["velocity"][3 * b:3 * b + 3]
        sim.add(m=ic["mass"][b], x=x[0], y=x[1], z=x[2], vx=v[0], vy=v[1], vz=v[2])
    sim.integrator = integrator
    if dt is not None:
        sim.dt = dt
    sim.move_to_com()
    e0 = sim.energy()
    start = time.perf_counter()
    sim.integrate(ic["t_end"], exact_finish_time=0 if integrator == "whfast" else 1)
    seconds = time.perf_counter() - start
    return abs((sim.energy() - e0) / e0), seconds


def main():
    ic = json.load(open(sys.argv[1]))
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    cases = [("REBOUND IAS15", "ias15", None),
             ("REBOUND WHFast dt 4 d", "whfast", 4 / 365.25),
             ("REBOUND WHFast dt 40 d", "whfast", 40 / 365.25)]
    for name, integrator, dt in cases:
        results = [run(ic, integrator, dt) for _ in range(repeats)]
        print(json.dumps({"name": name, "energy_error": results[-1][0],
                          "seconds": statistics.median(r[1] for r in results),
                          "rebound_version": rebound.__version__}), flush=True)


if __name__ == "__main__":
    main()
