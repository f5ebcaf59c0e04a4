import json, sys
d = json.load(open(sys.argv[1]))
s = d["searches"]
t = [x["time"] * 1e3 for x in s]
us = [x["time"] * 1e6 / max(x["depth"], 1) for x in s]
peak = d.get("memory_peak")
peak = peak.get("max", peak) if isinstance(peak, dict) else peak
print("%s grid %s comm %s launch %s: mean %.3f median %.3f max %.3f ms, us/level %s, depth %s, valid %s, "
      "hmean GTEPS %.1f, peak %s" % (sys.argv[1].split("/")[-1], d["grid"], d["comm"], d.get("level_launch"),
      d["bfs_mean_time"] * 1e3, d["bfs_median_time"] * 1e3, max(t), " ".join("%.2f" % u for u in us[:4]),
      sorted({x["depth"] for x in s}), all(x["validated"] for x in s), d["bfs_harmonic_mean_TEPS"] / 1e9, peak))
