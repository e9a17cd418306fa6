module github.com/fabricctl/fabricctl/tools/lemmingcheck

go 1.26.8

toolchain go1.26.11

require (
	github.com/fabricctl/fabricctl v0.0.0
	github.com/openconfig/gnmi v0.14.1
	github.com/openconfig/lemming v0.4.0
	github.com/openconfig/ygot v0.36.0
	golang.org/x/sync v0.25.0
	google.golang.org/grpc v1.85.0
)

require (
	bitbucket.org/creachadair/stringset v0.0.14 // indirect
	github.com/antchfx/xpath v1.3.9 // indirect
	github.com/fsnotify/fsnotify v1.9.0 // indirect
	github.com/go-viper/mapstructure/v2 v2.4.0 // indirect
	github.com/golang/glog v1.2.5 // indirect
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/kylelemons/godebug v1.1.0 // indirect
	github.com/openconfig/gocloser v0.0.0-20220310182203-c6c950ed3b0b // indirect
	github.com/openconfig/goyang v1.6.3 // indirect
	github.com/openconfig/ygnmi v0.11.1 // indirect
	github.com/pelletier/go-toml/v2 v2.2.4 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	github.com/sagikazarmark/locafero v0.11.0 // indirect
	github.com/sourcegraph/conc v0.3.1-0.20240121214520-5f936abd7ae8 // indirect
	github.com/spf13/afero v1.15.0 // indirect
	github.com/spf13/cast v1.10.0 // indirect
	github.com/spf13/cobra v1.10.2 // indirect
	github.com/spf13/pflag v1.0.10 // indirect
	github.com/spf13/viper v1.21.0 // indirect
	github.com/subosito/gotenv v1.6.0 // indirect
	go.yaml.in/yaml/v3 v3.0.4 // indirect
	golang.org/x/exp v0.0.0-20251009144603-d2f985daa21b // indirect
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
	golang.org/x/text v0.44.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260817212433-ac3dfec99bb1 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)

replace github.com/fabricctl/fabricctl => ../..
