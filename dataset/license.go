package dataset

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// License is the card's license: an id the Hugging Face Hub knows
// (hubLicenses; an SPDX id of one of them in any case, "MIT" → "mit"), or
// "other" with a name and a link to its text (the Hub's rule for
// license: other), or "unknown".
type License struct {
	ID   string `json:"license" yaml:"license"`
	Name string `json:"license_name,omitempty" yaml:"license_name,omitempty"`
	Link string `json:"license_link,omitempty" yaml:"license_link,omitempty"`
}

// Licenses the card's license field may hold besides hubLicenses.
const (
	LicenseOther   = "other"
	LicenseUnknown = "unknown"
)

// hubLicenses are the license ids of the Hugging Face Hub
// (https://huggingface.co/docs/hub/repositories-licenses), "unknown" and
// "other" included.
var hubLicenses = []string{
	"apache-2.0", "mit", "openrail", "bigscience-openrail-m", "creativeml-openrail-m", "bigscience-bloom-rail-1.0",
	"bigcode-openrail-m", "afl-3.0", "artistic-2.0", "bsl-1.0", "bsd", "bsd-2-clause", "bsd-3-clause",
	"bsd-3-clause-clear", "c-uda", "cc", "cc0-1.0", "cc-by-2.0", "cc-by-2.5", "cc-by-3.0", "cc-by-4.0",
	"cc-by-sa-3.0", "cc-by-sa-4.0", "cc-by-nc-2.0", "cc-by-nc-3.0", "cc-by-nc-4.0", "cc-by-nd-4.0",
	"cc-by-nc-nd-3.0", "cc-by-nc-nd-4.0", "cc-by-nc-sa-2.0", "cc-by-nc-sa-3.0", "cc-by-nc-sa-4.0",
	"cdla-sharing-1.0", "cdla-permissive-1.0", "cdla-permissive-2.0", "wtfpl", "ecl-2.0", "epl-1.0", "epl-2.0",
	"etalab-2.0", "eupl-1.1", "agpl-3.0", "gfdl", "gpl", "gpl-2.0", "gpl-3.0", "lgpl", "lgpl-2.1", "lgpl-3.0",
	"isc", "lppl-1.3c", "ms-pl", "mpl-2.0", "odc-by", "odbl", "openrail++", "osl-3.0", "postgresql", "ofl-1.1",
	"ncsa", "unlicense", "zlib", "pddl", "lgpl-lr", "deepfloyd-if-license", "llama2", "gemma",
	LicenseUnknown, LicenseOther,
}

// ErrLicense is wrapped by the errors of License.Check.
var ErrLicense = errors.New("dataset license")

// Check normalises the id to the Hub's spelling and checks the Hub's
// rules: a known id; with "other", a name and a link; with any other id,
// neither.
func (l *License) Check() error {
	id := strings.ToLower(strings.TrimSpace(l.ID))
	switch {
	case !slices.Contains(hubLicenses, id):
		return fmt.Errorf("%w %q is not a Hugging Face Hub license id (an SPDX id such as MIT or Apache-2.0, or unknown); for another license give other with its name and a link to its text (--dataset-license other --dataset-license-name NAME --dataset-license-link URL)", ErrLicense, l.ID)
	case id == LicenseOther && (l.Name == "" || l.Link == ""):
		return fmt.Errorf("%w other needs a license name and a link to the license's text (--dataset-license-name, --dataset-license-link): the Hub requires both", ErrLicense)
	case id != LicenseOther && (l.Name != "" || l.Link != ""):
		return fmt.Errorf("%w %s: a license name or link is only for license other", ErrLicense, id)
	}
	l.ID = id
	return nil
}
