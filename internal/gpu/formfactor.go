package gpu

import (
	"fmt"
	"regexp"
	"strings"
)

// deviceIDs are PCI device ids whose form factor is known (the low 16 bits
// of what nvidia-smi writes as 0x233010DE are the vendor, 10DE).
var deviceIDs = map[string]struct{ model, form string }{
	"2330": {"H100 SXM5 80GB", FormSXM5},
	"2336": {"H100 SXM5 94GB", FormSXM5},
	"2331": {"H100 PCIe", FormPCIe},
	"2321": {"H100 NVL", FormNVL},
	"20b0": {"A100 SXM4 40GB", FormSXM4},
	"20b2": {"A100 SXM4 80GB", FormSXM4},
	"20f1": {"A100 PCIe 40GB", FormPCIe},
	"20b5": {"A100 PCIe 80GB", FormPCIe},
}

// sxm5Names are product names of SXM5 boards that do not say so.
var sxm5Names = regexp.MustCompile(`^(NVIDIA )?(H100 80GB HBM3|H100 94GB HBM2e|H800 80GB HBM3|H800|H200|H20)$`)

var (
	sxmIn  = regexp.MustCompile(`(?i)\bSXM(\d)?\b`)
	pcieIn = regexp.MustCompile(`(?i)\bPCIE\b`)
	nvlIn  = regexp.MustCompile(`(?i)\bNVL\b`)
)

// byName is rule 1 of the form factor (package doc).
func byName(name string) (form, why string) {
	n := strings.TrimSpace(name)
	if n == "" {
		return "", ""
	}
	switch {
	case sxmIn.MatchString(n):
		m := sxmIn.FindStringSubmatch(n)
		f := FormSXM
		if m[1] != "" {
			f = "SXM" + m[1]
		}
		return f, fmt.Sprintf("product name %q says %s", n, f)
	case nvlIn.MatchString(n):
		return FormNVL, fmt.Sprintf("product name %q says NVL", n)
	case pcieIn.MatchString(n):
		return FormPCIe, fmt.Sprintf("product name %q says PCIe", n)
	case sxm5Names.MatchString(n):
		return FormSXM5, fmt.Sprintf("product name %q is the SXM5 board's (the PCIe and NVL boards say PCIe or NVL)", n)
	case strings.Contains(strings.ToUpper(n), "GEFORCE") || strings.Contains(strings.ToUpper(n), "RTX") ||
		regexp.MustCompile(`^(NVIDIA )?(L4|L40|L40S|L20|A10|A10G|A16|A2|A30|A40|T4|Tesla T4|Tesla P4|Tesla P40)$`).MatchString(n):
		return FormPCIe, fmt.Sprintf("product name %q is a PCIe-only card", n)
	}
	return "", ""
}

// byDeviceID is rule 2.
func byDeviceID(id string) (form, why string) {
	s := strings.ToLower(strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(id), "0x"), "0X"))
	if len(s) == 8 {
		s = s[:4]
	}
	if d, ok := deviceIDs[s]; ok {
		return d.form, fmt.Sprintf("PCI device %s is the %s", id, d.model)
	}
	return "", ""
}

// DeriveFormFactor sets each card's form factor and evidence (package doc).
func DeriveFormFactor(m *Machine) {
	topoFor := map[int]string{}
	if t := m.Topology; t != nil && len(t.GPUs) == len(m.Cards) {
		n := len(t.GPUs)
		for i := 0; i < n; i++ {
			peers, counts := 0, map[int]bool{}
			for j := 0; j < n; j++ {
				if k := NVLinks(t.Links[i][j]); i != j && k > 0 {
					peers++
					counts[k] = true
				}
			}
			switch {
			case n > 2 && peers == n-1:
				topoFor[i] = fmt.Sprintf("topo: NVLink to all %d other cards (NVSwitch baseboard) → SXM", n-1)
			case peers == 1:
				topoFor[i] = "topo: NVLink to exactly one other card (a bridged pair) → NVL or bridged PCIe"
			case peers == 0 && n > 1:
				topoFor[i] = "topo: no NVLink to any other card → PCIe"
			}
		}
	}
	for i := range m.Cards {
		c := &m.Cards[i]
		c.Evidence = nil
		var forms []string
		if f, why := byName(c.Name); f != "" {
			forms = append(forms, f)
			c.Evidence = append(c.Evidence, why)
		}
		if f, why := byDeviceID(c.DeviceID); f != "" {
			forms = append(forms, f)
			c.Evidence = append(c.Evidence, why)
		}
		if why, ok := topoFor[i]; ok {
			f := FormPCIe
			switch {
			case strings.HasSuffix(why, "SXM"):
				f = FormSXM
			case strings.Contains(why, "bridged pair"):
				f = FormNVL
			}
			forms = append(forms, f)
			c.Evidence = append(c.Evidence, why)
		}
		if c.MaxPowerLimitW != nil {
			switch {
			case *c.MaxPowerLimitW > 450:
				forms = append(forms, FormSXM)
				c.Evidence = append(c.Evidence, fmt.Sprintf("max power limit %.0f W: above the 450 W no PCIe card goes → SXM", *c.MaxPowerLimitW))
			default:
				c.Evidence = append(c.Evidence, fmt.Sprintf("max power limit %.0f W (says nothing alone: A100 SXM4 is 400 W too)", *c.MaxPowerLimitW))
			}
		}
		c.FormFactor = FormUnknown
		if len(forms) > 0 {
			c.FormFactor = forms[0]
			// A bridged pair seen in the matrix says NVL only when nothing
			// stronger spoke: two PCIe cards with a bridge look the same.
			for _, f := range forms[1:] {
				if !compatible(c.FormFactor, f) {
					c.Evidence = append(c.Evidence, fmt.Sprintf("conflict: %s evidence above disagrees with %s", f, c.FormFactor))
				}
			}
		}
	}
}

// compatible reports whether evidence for b agrees with the form factor a.
func compatible(a, b string) bool {
	if a == b {
		return true
	}
	isSXM := func(f string) bool { return strings.HasPrefix(f, "SXM") }
	if isSXM(a) && isSXM(b) {
		return a == FormSXM || b == FormSXM
	}
	// an NVL card is a PCIe card with bridges
	if (a == FormNVL && b == FormPCIe) || (a == FormPCIe && b == FormNVL) {
		return true
	}
	return false
}
