module kwq.dev/kwq

go 1.26.0

require (
	github.com/prometheus/client_golang v1.23.2
	golang.org/x/sys v0.49.0
	k8s.io/client-go v0.36.4
	k8s.io/utils v0.0.0-20260210185600-b8788abfbbc2
)

require (
	github.com/go-logr/logr v1.4.4 // indirect
	golang.org/x/time v0.16.0 // indirect
	k8s.io/apimachinery v0.36.4 // indirect
	k8s.io/klog/v2 v2.140.0 // indirect
)
