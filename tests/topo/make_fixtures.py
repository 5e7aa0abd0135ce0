#!/usr/bin/env python3
"""Write the hwloc XML fixtures of tests/topo: recorded-style topologies of
machines we do not have, small enough to read (few cores, one PU each).

    python3 tests/topo/make_fixtures.py [OUTDIR]   # default: this folder

The files are committed; rerun this script after changing it and commit both.
Each file must load with `lstopo -i FILE` (hwloc 2.x XML, version="2.0").

  nvswitch-8gpu-8nic.xml  2 sockets (NUMA 0, 1), 4 PCIe switches, each with 2
                          NVIDIA GPUs and 2 mlx5 InfiniBand NICs; 4 NVSwitch
                          bridges; NVLinkBandwidth all-to-all among the GPUs.
  pcie-4gpu-1nic.xml      2 sockets, 2 GPUs behind a PCIe switch on each, one
                          RoCE NIC (mlx5, Ethernet link layer) on NUMA 0; no
                          NVLink.
  cpu-2numa-1nic.xml      2 sockets, no GPU, one Ethernet NIC on NUMA 0.
"""
import os
import sys
from xml.sax.saxutils import quoteattr


class Writer:
    """Emits hwloc's XML object tree, numbering gp_index as it goes."""

    def __init__(self):
        self.lines = []
        self.next_gp = 1
        self.depth = 0

    def gp(self):
        self.next_gp += 1
        return self.next_gp - 1

    def open(self, attrs, infos=(), leaf=False):
        gp = self.gp()
        attrs = dict(attrs, gp_index=str(gp))
        text = " ".join("%s=%s" % (k, quoteattr(v)) for k, v in attrs.items())
        pad = "  " * (self.depth + 1)
        if leaf and not infos:
            self.lines.append("%s<object %s/>" % (pad, text))
            return gp
        self.lines.append("%s<object %s>" % (pad, text))
        for name, value in infos:
            self.lines.append("%s  <info name=%s value=%s/>" % (pad, quoteattr(name), quoteattr(value)))
        self.depth += 1
        if leaf:
            self.close()
        return gp

    def close(self):
        self.depth -= 1
        self.lines.append("  " * (self.depth + 1) + "</object>")


def mask(bits):
    value = 0
    for b in bits:
        value |= 1 << b
    return "0x%08x" % value


def sets(cpus, nodes):
    return {"cpuset": mask(cpus), "complete_cpuset": mask(cpus),
            "nodeset": mask(nodes), "complete_nodeset": mask(nodes)}


class Machine:
    """sockets x cores_per_socket, one NUMA node and one PU per core per socket."""

    def __init__(self, name, sockets, cores_per_socket):
        self.name = name
        self.w = Writer()
        self.sockets = sockets
        self.cores = cores_per_socket
        self.distances = []  # (name, [gp], [[MB/s]])
        ncpu = sockets * cores_per_socket
        root = dict(type="Machine", os_index="0", **sets(range(ncpu), range(sockets)))
        root.update(allowed_cpuset=mask(range(ncpu)), allowed_nodeset=mask(range(sockets)))
        self.w.open(root, infos=[("Backend", "Linux"), ("OSName", "Linux"), ("HostName", name),
                                 ("Architecture", "x86_64"), ("hwlocVersion", "2.9.0"),
                                 ("ChorusFixture", "tests/topo/make_fixtures.py")])

    def open_socket(self, s):
        cpus = range(s * self.cores, (s + 1) * self.cores)
        self.w.open(dict(type="Package", os_index=str(s), **sets(cpus, [s])),
                    infos=[("CPUVendor", "GenuineIntel"), ("CPUModel", "Fixture CPU")])
        self.w.open(dict(type="NUMANode", os_index=str(s), local_memory=str(64 << 30), **sets(cpus, [s])),
                    leaf=True)
        for c in cpus:
            self.w.open(dict(type="Core", os_index=str(c), **sets([c], [s])))
            self.w.open(dict(type="PU", os_index=str(c), **sets([c], [s])), leaf=True)
            self.w.close()

    def host_bridge(self, first_bus, last_bus):
        self.w.open(dict(type="Bridge", bridge_type="0-1", depth="0",
                         bridge_pci="0000:[%02x-%02x]" % (first_bus, last_bus)))

    def pci_bridge(self, busid, first_bus, last_bus, depth, speed="31.507692"):
        self.w.open(dict(type="Bridge", bridge_type="1-1", depth=str(depth),
                         bridge_pci="0000:[%02x-%02x]" % (first_bus, last_bus),
                         pci_busid=busid, pci_type="0604 [1000:c030] [1000:a064] b0",
                         pci_link_speed=speed))

    def pci_device(self, busid, class_vendor_device, speed="31.507692", subtype=None):
        attrs = dict(type="PCIDev", pci_busid=busid, pci_type=class_vendor_device, pci_link_speed=speed)
        if subtype:
            attrs["subtype"] = subtype
        return self.w.open(attrs)

    def osdev(self, name, osdev_type, infos=(), subtype=None):
        attrs = dict(type="OSDev", name=name, osdev_type=str(osdev_type))
        if subtype:
            attrs["subtype"] = subtype
        return self.w.open(attrs, infos=infos, leaf=True)

    def close(self, n=1):
        for _ in range(n):
            self.w.close()

    def text(self):
        self.close()  # Machine
        out = ['<?xml version="1.0" encoding="UTF-8"?>',
               '<!DOCTYPE topology SYSTEM "hwloc2.dtd">',
               '<topology version="2.0">']
        out += self.w.lines
        for name, gps, values in self.distances:
            n = len(gps)
            out.append('  <distances2 type="OSDev" nbobjs="%d" kind="9" name="%s" indexing="gp">' % (n, name))
            # `length` counts the characters of the content, not the numbers.
            indexes = " ".join(map(str, gps)) + " "
            flat = " ".join(str(v) for row in values for v in row) + " "
            out.append('    <indexes length="%d">%s</indexes>' % (len(indexes), indexes))
            out.append('    <u64values length="%d">%s</u64values>' % (len(flat), flat))
            out.append("  </distances2>")
        out.append("</topology>")
        return "\n".join(out) + "\n"


# osdev_type values of hwloc 2.x (hwloc_obj_osdev_type_e).
OSDEV_GPU, OSDEV_NETWORK, OSDEV_OPENFABRICS, OSDEV_COPROC = 1, 2, 3, 5
H100 = "0302 [10de:2330] [10de:16c1] a1"
L40S = "0302 [10de:26b9] [10de:1851] a1"
CX7_IB = "0207 [15b3:1021] [15b3:0041] 00"
CX6_ETH = "0200 [15b3:101d] [15b3:0016] 00"
I350 = "0200 [8086:1521] [8086:0001] 01"
NVSWITCH = "0680 [10de:22a3] [10de:1796] a1"


def gpu(m, busid, index, kind, nvml=True):
    m.pci_device(busid, kind)
    m.osdev("cuda%d" % index, OSDEV_COPROC, subtype="CUDA",
            infos=[("Backend", "CUDA"), ("GPUVendor", "NVIDIA Corporation"), ("CoProcType", "CUDA")])
    nvml_gp = None
    if nvml:
        nvml_gp = m.osdev("nvml%d" % index, OSDEV_GPU, subtype="NVML",
                          infos=[("Backend", "NVML"), ("GPUVendor", "NVIDIA Corporation")])
    m.close()
    return nvml_gp


def ib_nic(m, busid, index, guid):
    m.pci_device(busid, CX7_IB)
    m.osdev("ib%d" % index, OSDEV_NETWORK, infos=[("Address", "00:00:10:29:fe:80:00:00:00:00:00:00:" + guid)])
    m.osdev("mlx5_%d" % index, OSDEV_OPENFABRICS,
            infos=[("NodeGUID", guid), ("SysImageGUID", guid), ("Port1State", "4"), ("Port1LID", str(index + 1)),
                   ("Port1LMC", "0"), ("Port1LinkLayer", "InfiniBand")])
    m.close()


def nvswitch_node():
    m = Machine("fixture-nvswitch", sockets=2, cores_per_socket=4)
    nvml = []
    switch_bus = [0x10, 0x40, 0x90, 0xc0]
    for s in range(2):
        m.open_socket(s)
        for sw in (2 * s, 2 * s + 1):
            base = switch_bus[sw]
            m.host_bridge(base, base + 0x0f)
            m.pci_bridge("0000:%02x:00.0" % base, base + 1, base + 0x0f, depth=1)
            for port, kind in enumerate(("gpu", "gpu", "nic", "nic")):
                bus = base + 2 + port
                m.pci_bridge("0000:%02x:%02x.0" % (base + 1, port), bus, bus, depth=2)
                index = 2 * sw + port % 2
                if kind == "gpu":
                    nvml.append(gpu(m, "0000:%02x:00.0" % bus, index, H100))
                else:
                    ib_nic(m, "0000:%02x:00.0" % bus, index, "946d:ae03:00%02x:%04x" % (sw, 0x1000 + index))
                m.close()  # downstream port
            m.close(2)  # upstream port, host bridge
        if s == 1:
            # The NVSwitch chips show up as NVIDIA bridges (class 0680).
            m.host_bridge(0xe0, 0xe4)
            for k in range(4):
                m.pci_device("0000:e%d:00.0" % (k + 1), NVSWITCH, subtype="NVSwitch")
                m.close()
            m.close()
        m.close()  # socket
    # 18 NVLink4 links per GPU into the switches: 450 GB/s to any other GPU;
    # the diagonal is the GPU's own memory, as hwloc writes it.
    bw = [[1000000 if i == j else 450000 for j in range(8)] for i in range(8)]
    m.distances.append(("NVLinkBandwidth", nvml, bw))
    return m


def pcie_node():
    m = Machine("fixture-pcie", sockets=2, cores_per_socket=2)
    for s in range(2):
        m.open_socket(s)
        base = 0x20 if s == 0 else 0xa0
        m.host_bridge(base, base + 0x1f)
        m.pci_bridge("0000:%02x:01.0" % base, base + 1, base + 4, depth=1)  # CPU root port
        m.pci_bridge("0000:%02x:00.0" % (base + 1), base + 2, base + 4, depth=2)  # switch upstream
        for k in range(2):
            bus = base + 3 + k
            m.pci_bridge("0000:%02x:%02x.0" % (base + 2, k), bus, bus, depth=3)
            gpu(m, "0000:%02x:00.0" % bus, 2 * s + k, L40S, nvml=False)
            m.close()
        m.close(2)
        if s == 0:
            # The NIC hangs off another root port of the same host bridge.
            m.pci_bridge("0000:%02x:03.0" % base, base + 0x10, base + 0x10, depth=1, speed="15.753846")
            m.pci_device("0000:%02x:00.0" % (base + 0x10), CX6_ETH, speed="15.753846")
            m.osdev("ens1f0np0", OSDEV_NETWORK, infos=[("Address", "b8:ce:f6:12:34:56")])
            m.osdev("mlx5_0", OSDEV_OPENFABRICS,
                    infos=[("NodeGUID", "b8ce:f603:0012:3456"), ("SysImageGUID", "b8ce:f603:0012:3456"),
                           ("Port1State", "4"), ("Port1LID", "0"), ("Port1LMC", "0"),
                           ("Port1GID0", "fe80:0000:0000:0000:bace:f6ff:fe12:3456")])
            m.close(2)
        m.close(2)  # host bridge, socket
    return m


def cpu_node():
    m = Machine("fixture-cpu", sockets=2, cores_per_socket=2)
    for s in range(2):
        m.open_socket(s)
        if s == 0:
            m.host_bridge(0x00, 0x02)
            m.pci_bridge("0000:00:1c.0", 0x02, 0x02, depth=1, speed="2.000000")
            m.pci_device("0000:02:00.0", I350, speed="2.000000")
            m.osdev("eth0", OSDEV_NETWORK, infos=[("Address", "3c:ec:ef:00:11:22")])
            m.close(3)
        m.close()
    return m


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    for filename, build in (("nvswitch-8gpu-8nic.xml", nvswitch_node), ("pcie-4gpu-1nic.xml", pcie_node),
                            ("cpu-2numa-1nic.xml", cpu_node)):
        with open(os.path.join(out, filename), "w") as f:
            f.write(build().text())


if __name__ == "__main__":
    main()
