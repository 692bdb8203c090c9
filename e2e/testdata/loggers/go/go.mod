module github.com/sidecarhq/sidecar/e2e/testdata/loggers/go

go 1.26

require (
	github.com/sirupsen/logrus v1.10.2
	go.uber.org/zap v1.28.0
)

require (
	go.uber.org/multierr v1.10.0 // indirect
	golang.org/x/sys v0.13.0 // indirect
)
