// Package host describes the machine linecheck runs on, read from a
// filesystem root (/ on the machine, a fixture tree in tests): how it is
// delivered (Form: bare metal, a virtual machine and its hypervisor, or a
// container and its runtime, with the files that say so), what it holds
// (Inventory: CPU, memory, NUMA nodes, NVMe disks, NICs, RDMA devices,
// kernel), and whether that meets the order (Contract, the candidates'
// host: block).
//
// Detection follows the cases systemd-detect-virt tells apart, from files
// only (no CPUID instruction): containers first (a VM may run the
// container; the container is what the buyer gets), then the hypervisor
// from DMI vendor strings, the clocksource a paravirtual guest registers,
// /sys/hypervisor/type and the cpuinfo "hypervisor" flag. Bare metal is
// claimed only when none of these is found and DMI names a vendor.
package host
