// Package gpu turns what the NVIDIA driver reports about a rented GPU server
// into the facts a buyer ordered, and checks them against the contract.
//
// Inputs (each optional, any mix): `nvidia-smi -q -x` (XML, ParseXML),
// `nvidia-smi -q` (the same tree as text, ParseQText), the query form
// `nvidia-smi --query-gpu=… --format=csv` (ParseQueryCSV, columns found by
// their header names) and `nvidia-smi topo -m` (ParseTopo). Merge joins
// them into one Machine: cards are matched by PCI bus id, else by index.
//
// Form factor (DeriveFormFactor) is derived from evidence, strongest first:
//
//  1. the product name: "SXM" in it (A100-SXM4-80GB), "PCIe", "NVL"; the
//     H100/H200/H800 SXM5 boards carry no form factor in their name
//     ("NVIDIA H100 80GB HBM3", "NVIDIA H200"), the PCIe and NVL boards do
//     ("NVIDIA H100 PCIe", "NVIDIA H100 NVL");
//  2. the PCI device id (0x2330 H100 SXM5, 0x2331 H100 PCIe, 0x2321 H100 NVL …);
//  3. the topology: NVLink to every other card (NVSwitch) is an SXM
//     baseboard; NVLink to exactly one other card is a bridged pair (NVL,
//     or PCIe cards with a bridge); no NVLink at all with a "PCIe"-class
//     power limit is a PCIe card;
//  4. the maximum power limit: above 450 W no PCIe card goes (the PCIe CEM
//     slot with a 16-pin connector tops out there), so it is SXM.
//
// The first rule that decides gives the form factor; every rule that has
// something to say is kept as evidence, and a rule that disagrees is
// reported as a conflict.
//
// A model is written as buyers write it ("H100 SXM5", "H100 PCIe", "H200",
// "A100 80GB", "H100 NVL"): a family (H100, H200, A100, L40S, RTX 4090 …),
// optionally a form factor (SXM, SXM4, SXM5, PCIe, NVL) and a memory size
// (80GB). MatchModel passes a card when its product name holds the family
// as a whole word, its derived form factor is the one named (SXM matches
// SXM4 and SXM5), and its memory is the size named (within MemoryTolerance).
// A model without a form factor passes any form factor of that family.
//
// Watch samples (Sample) come from the query CSV in a loop; a sample is
// throttled when its clock-event (throttle) reasons hold any of SW power
// cap, HW slowdown, SW thermal, HW thermal or HW power brake; idle,
// application clock settings, sync boost and display clock are not
// throttling. The share of time throttled is throttled samples / samples
// with the reasons reported; per reason likewise.
package gpu
