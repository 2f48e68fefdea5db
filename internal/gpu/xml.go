package gpu

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"strings"
)

type xmlLog struct {
	XMLName      xml.Name `xml:"nvidia_smi_log"`
	Driver       string   `xml:"driver_version"`
	CUDA         string   `xml:"cuda_version"`
	AttachedGPUs string   `xml:"attached_gpus"`
	GPUs         []xmlGPU `xml:"gpu"`
}

type xmlGPU struct {
	ID      string `xml:"id,attr"`
	Product string `xml:"product_name"`
	Serial  string `xml:"serial"`
	UUID    string `xml:"uuid"`
	MIG     struct {
		Current string `xml:"current_mig"`
	} `xml:"mig_mode"`
	MIGDevices struct {
		Devices []struct{} `xml:"mig_device"`
		Text    string     `xml:",chardata"`
	} `xml:"mig_devices"`
	PCI struct {
		DeviceID string `xml:"pci_device_id"`
		BusID    string `xml:"pci_bus_id"`
		Link     struct {
			Gen struct {
				Max     string `xml:"max_link_gen"`
				Current string `xml:"current_link_gen"`
			} `xml:"pcie_gen"`
			Width struct {
				Max     string `xml:"max_link_width"`
				Current string `xml:"current_link_width"`
			} `xml:"link_widths"`
		} `xml:"pci_gpu_link_info"`
	} `xml:"pci"`
	FB struct {
		Total string `xml:"total"`
	} `xml:"fb_memory_usage"`
	ECC struct {
		Current string `xml:"current_ecc"`
	} `xml:"ecc_mode"`
	// Drivers before 535 write power_readings with power_limit; 535 and
	// later gpu_power_readings with current_power_limit.
	Power    xmlPower `xml:"power_readings"`
	GPUPower xmlPower `xml:"gpu_power_readings"`
}

type xmlPower struct {
	Limit    string `xml:"power_limit"`
	Current  string `xml:"current_power_limit"`
	Enforced string `xml:"enforced_power_limit"`
	Default  string `xml:"default_power_limit"`
	Max      string `xml:"max_power_limit"`
}

// ParseXML reads `nvidia-smi -q -x`. name is the file name errors carry.
func ParseXML(b []byte, name string) (*Machine, error) {
	var l xmlLog
	d := xml.NewDecoder(bytes.NewReader(b))
	// nvidia-smi declares its DTD; nothing is fetched (encoding/xml never
	// resolves external entities), and undeclared entities are an error.
	if err := d.Decode(&l); err != nil {
		var se *xml.SyntaxError
		if errors.As(err, &se) {
			return nil, perr(name, se.Line, "not well-formed XML (%s): save the whole output of nvidia-smi -q -x", se.Msg)
		}
		if err.Error() == "EOF" {
			return nil, perr(name, 0, "empty: save the output of nvidia-smi -q -x")
		}
		return nil, perr(name, 0, "not the XML of nvidia-smi -q -x: %v", err)
	}
	if len(l.GPUs) == 0 {
		return nil, perr(name, 0, "no <gpu> element: not the output of nvidia-smi -q -x on a machine with GPUs")
	}
	var attached int
	if _, err := fmt.Sscanf(strings.TrimSpace(l.AttachedGPUs), "%d", &attached); err == nil && attached > len(l.GPUs) {
		return nil, perr(name, 0, "%d <gpu> elements, but <attached_gpus> says %d: the output is cut short", len(l.GPUs), attached)
	}
	m := &Machine{Driver: strings.TrimSpace(l.Driver), CUDA: strings.TrimSpace(l.CUDA)}
	src := "xml:" + name
	for i, g := range l.GPUs {
		c := Card{Index: i, Name: strings.TrimSpace(g.Product), Serial: clean(g.Serial), UUID: clean(g.UUID),
			BusID: normBusID(firstNonEmpty(g.PCI.BusID, g.ID)), DeviceID: clean(g.PCI.DeviceID),
			ECC: mode(g.ECC.Current), MIG: mode(g.MIG.Current), Sources: []string{src}}
		if c.DeviceID != "" && !strings.HasPrefix(strings.ToLower(c.DeviceID), "0x") {
			c.DeviceID = "0x" + c.DeviceID
		}
		if c.MIG == "Enabled" || len(g.MIGDevices.Devices) > 0 {
			c.MIGDevices = iptr(len(g.MIGDevices.Devices))
		}
		p := g.GPUPower
		if p == (xmlPower{}) {
			p = g.Power
		}
		var errs []error
		add := func(field string, err error) {
			if err != nil {
				errs = append(errs, fmt.Errorf("gpu %d (%s): <%s>: %v", i, c.BusID, field, err))
			}
		}
		add("fb_memory_usage/total", setNum(&c.MemoryMiB, g.FB.Total))
		limit, limitField := firstNonEmpty(p.Enforced, p.Current, p.Limit), "enforced_power_limit"
		add(limitField, setNum(&c.PowerLimitW, limit))
		add("default_power_limit", setNum(&c.DefaultPowerLimitW, p.Default))
		add("max_power_limit", setNum(&c.MaxPowerLimitW, p.Max))
		add("max_link_gen", setInt(&c.PCIeGenMax, g.PCI.Link.Gen.Max))
		add("current_link_gen", setInt(&c.PCIeGenCurrent, g.PCI.Link.Gen.Current))
		add("max_link_width", setInt(&c.PCIeWidthMax, g.PCI.Link.Width.Max))
		add("current_link_width", setInt(&c.PCIeWidthCurrent, g.PCI.Link.Width.Current))
		if len(errs) > 0 {
			return nil, perr(name, 0, "%v", errors.Join(errs...))
		}
		m.Cards = append(m.Cards, c)
	}
	return m, nil
}

func clean(s string) string {
	s = strings.TrimSpace(s)
	if absent(s) {
		return ""
	}
	return s
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if strings.TrimSpace(v) != "" && !absent(v) {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
