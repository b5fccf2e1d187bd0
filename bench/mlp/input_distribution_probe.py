"""Does the input distribution change the MLP's time at the power cap? torch eager (cuBLAS) GPT-3 MLP, tanh GELU,
CUDA graph; normal inputs (torch_baselines.py: x ~ N(0,1), w ~ N(0, 1/fan_in)) against uniform ones
(mlp_fused_example: x ~ U[-1,1), w ~ U[-1/sqrt(fan_in), 1/sqrt(fan_in))), and zeros; interleaved rounds, with
nvidia-smi sampling power and SM clock."""
import statistics, subprocess, time, torch
import torch.nn.functional as F
H, I = 12288, 6144
def make(dist, m):
    g = torch.Generator(device="cuda"); g.manual_seed(1234 + m)
    if dist == "normal":
        x = torch.randn(m, H, device="cuda", generator=g).half()
        w1 = (torch.randn(I, H, device="cuda", generator=g) / H ** 0.5).half()
        w2 = (torch.randn(H, I, device="cuda", generator=g) / I ** 0.5).half()
    elif dist == "uniform":
        x = (torch.rand(m, H, device="cuda", generator=g) * 2 - 1).half()
        w1 = ((torch.rand(I, H, device="cuda", generator=g) * 2 - 1) / H ** 0.5).half()
        w2 = ((torch.rand(H, I, device="cuda", generator=g) * 2 - 1) / I ** 0.5).half()
    else:
        x = torch.zeros(m, H, device="cuda", dtype=torch.half); w1 = torch.zeros(I, H, device="cuda", dtype=torch.half); w2 = torch.zeros(H, I, device="cuda", dtype=torch.half)
    return x, w1, w2
def run(dist, m, pairs=20, seconds=2.0):
    x, w1, w2 = make(dist, m)
    f = lambda: F.linear(F.gelu(F.linear(x, w1), approximate="tanh"), w2)
    s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3): f()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(pairs): y = f()
    for _ in range(3): g.replay()
    torch.cuda.synchronize()
    smi = subprocess.Popen(["nvidia-smi", "--query-gpu=power.draw.instant,clocks.sm", "--format=csv,noheader,nounits", "-lms", "20"], stdout=subprocess.PIPE, text=True)
    time.sleep(0.3)
    a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
    a.record(); g.replay(); b.record(); b.synchronize()
    reps = max(5, int(seconds * 1000 / a.elapsed_time(b)))
    times = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
        a.record(); g.replay(); b.record(); b.synchronize()
        times.append(a.elapsed_time(b) * 1000 / pairs)
    smi.terminate(); out = smi.communicate()[0]
    rows = [l.split(",") for l in out.strip().splitlines() if "," in l]
    busy = [(float(p), float(c)) for p, c in rows if float(p) > 250]
    pw = statistics.median(p for p, _ in busy) if busy else float("nan")
    ck = statistics.median(c for _, c in busy) if busy else float("nan")
    return statistics.median(times), pw, ck, len(busy)
print(torch.cuda.get_device_name(), torch.__version__)
for rnd in (1, 2):
    for m in (1024, 4096):
        for dist in ("normal", "uniform", "zeros"):
            t, p, c, n = run(dist, m)
            print(f"round {rnd} M={m:5d} {dist:8s} {t:8.1f} us/MLP  power {p:6.1f} W  SM clock {c:6.0f} MHz  ({n} samples)", flush=True)
