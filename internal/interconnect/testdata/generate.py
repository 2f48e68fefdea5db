#!/usr/bin/env python3
"""Writes the generated fixtures of this directory (see README.md): outputs in
the layout of nvbandwidth v0.8, perftest's ib_write_bw --report_gbits and
nccl-tests 2.x all_reduce_perf, with figures from the stated models. Run from
this directory; the outputs are committed."""

GPU = "NVIDIA H100 80GB HBM3"


def nvbandwidth(name, slow_pairs):
    n = 8
    out = ["nvbandwidth Version: v0.8", "Built from Git version: v0.8", "",
           "CUDA Runtime Version: 12040", "CUDA Driver Version: 12040",
           "Driver Version: 550.127.08", ""]
    for d in range(n):
        out.append("Device %d: %s (00000000:%02x:00)" % (d, GPU, 0x18 + 0x10 * d))
    out += ["", "Running device_to_device_memcpy_read_ce.",
            "memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)",
            "  " + "".join("%10d" % c for c in range(n))]
    total = 0.0
    for r in range(n):
        cells = []
        for c in range(n):
            if r == c:
                cells.append("%10s" % "N/A")
                continue
            # NVLink 4 through NVSwitch: 388.00 to 390.25 GB/s a pair.
            v = 388.00 + ((r * 7 + c * 3) % 10) * 0.25
            if (r, c) in slow_pairs:
                v = 47.30
            total += v
            cells.append("%10.2f" % v)
        out.append("%2d" % r + "".join(cells))
    out += ["", "SUM device_to_device_memcpy_read_ce %.2f" % total, ""]
    open(name, "w").write("\n".join(out))


def ib_write_bw(name):
    out = ["---------------------------------------------------------------------------------------",
           "                    RDMA_Write BW Test",
           " Dual-port       : OFF\t\tDevice         : mlx5_0",
           " Number of qps   : 1\t\tTransport type : IB",
           " Connection type : RC\t\tUsing SRQ      : OFF",
           " PCIe relax order: ON",
           " ibv_wr* API     : ON",
           " TX depth        : 128",
           " CQ Moderation   : 100",
           " Mtu             : 4096[B]",
           " Link type       : IB",
           " Max inline data : 0[B]",
           " rdma_cm QPs\t : OFF",
           " Data ex. method : Ethernet",
           "---------------------------------------------------------------------------------------",
           " local address: LID 0x07 QPN 0x0123 PSN 0x1a2b3c RKey 0x1fffb9 VAddr 0x007f58a406e000",
           " remote address: LID 0x08 QPN 0x0124 PSN 0x4d5e6f RKey 0x1fffb9 VAddr 0x007f71dddd9000",
           "---------------------------------------------------------------------------------------",
           " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]"]
    for k in range(1, 24):
        size = 1 << k
        # 4X NDR: 400 Gb/s signalling, 394 Gb/s at most after headers; a
        # message pays 0.05 µs of overhead.
        avg = size * 8 / 1e3 / (size * 8 / 394.0 / 1e3 + 0.05)
        peak = avg * 1.002
        rate = avg * 1e9 / 8 / size / 1e6
        out.append(" %-10d %-10d       %-7.2f            %-7.2f\t\t   %.6f" % (size, 5000, peak, avg, rate))
    out += ["---------------------------------------------------------------------------------------", ""]
    open(name, "w").write("\n".join(out))


def nccl_time(us):
    if us >= 10000:
        return "%7.0f" % us
    if us >= 100:
        return "%7.1f" % us
    return "%7.2f" % us


def all_reduce(name, host, gpu, bus_inf, lat_us):
    n = 8
    out = ["# nThread 1 nGpus %d minBytes 1048576 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0" % n,
           "#", "# Using devices"]
    for r in range(n):
        out.append("#  Rank %2d Group  0 Pid   4242 on %s device %2d [0x%02x] %s" % (r, host, r, 0x18 + 0x10 * r, gpu))
    out += ["#",
            "#                                                              out-of-place                       in-place          ",
            "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong",
            "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       "]
    factor = 2 * (n - 1) / n
    alg_inf = bus_inf / factor  # GB/s = 1e3 bytes per µs
    buses = []
    size = 1 << 20
    while size <= 1 << 33:
        cols = []
        for lat in (lat_us, lat_us - 1):
            t = lat + size / (alg_inf * 1e3)
            alg = size / t / 1e3
            bus = alg * factor
            buses.append(bus)
            cols.append("%s %7.2f %7.2f %6d" % (nccl_time(t), alg, bus, 0))
        out.append("%12d  %12d     float     sum      -1  %s  %s" % (size, size // 4, cols[0], cols[1]))
        size *= 2
    out += ["# Out of bounds values : 0 OK", "# Avg bus bandwidth    : %.4f " % (sum(buses) / len(buses)), "#", ""]
    open(name, "w").write("\n".join(out))


nvbandwidth("nvbandwidth-h100-8x-nvswitch.txt", set())
nvbandwidth("nvbandwidth-h100-8x-one-slow-pair.txt", {(3, 5), (5, 3)})
ib_write_bw("ib_write_bw-ndr-400.txt")
all_reduce("all_reduce_perf-dgx-h100-8x.txt", "dgx-h100", GPU, 460.0, 25.0)
all_reduce("all_reduce_perf-pcie-8x.txt", "pcie-box", "NVIDIA H100 PCIe", 20.0, 60.0)
