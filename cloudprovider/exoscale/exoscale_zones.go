package exoscale

import (
	"os"
	"strings"

	v3 "github.com/exoscale/egoscale/v3"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
)

// publishedZones are the zones egoscale v3 names (its ZoneName constants):
// the list preflight checks EXOSCALE_ZONE against without a call. A zone
// the SDK does not know yet only gets a warning.
var publishedZones = []v3.ZoneName{
	v3.ZoneNameCHGva2, v3.ZoneNameCHDk2, v3.ZoneNameDEFra1, v3.ZoneNameDEMuc1,
	v3.ZoneNameATVie1, v3.ZoneNameATVie2, v3.ZoneNameBGSof1, v3.ZoneNameHrZag1,
}

// zoneLocation is the registration's Location: EXOSCALE_ZONE as read from
// the environment, and the published zones.
func zoneLocation(registry.BuildOptions) registry.Location {
	loc := registry.Location{Name: strings.TrimSpace(os.Getenv(EnvZone)), Kind: "zone", Setting: EnvZone}
	for _, z := range publishedZones {
		loc.Published = append(loc.Published, string(z))
	}
	return loc
}
