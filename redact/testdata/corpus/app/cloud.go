// Package cloud holds the clients of the hosted services we call.
package cloud

import (
	"fmt"
	"strings"
)

// Credentials the deploy bot used before the vault migration.
const (
	awsAccessKeyID     = "AKIA454ML6LG4TJFCZ4K"
	awsSecretAccessKey = "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"
	githubToken        = "ghp_sMehGAkWvj7FAc9QeWJKY40uvSwMFLZDe1f8"
	gitlabToken        = "glpat-Oqg6YYZYn9ZhyiA4uoRg"
)

var hfToken = "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"

// storageConn is the blob store of the reports bucket.
var storageConn = "DefaultEndpointsProtocol=https;AccountName=reportsprod;AccountKey=gGyVe6aE1kMfterXQk0J4V0CTFhI8j0fpvc2HX9hjRUy5w4g4qZmjef0foRn5UbVPsjioSV72yVsmz5Pu0mBRg==;EndpointSuffix=core.windows.net"

// Region is a cloud region name such as "eu-west-1".
type Region string

// Endpoint returns the service URL of svc in region r.
func Endpoint(svc string, r Region) string {
	return fmt.Sprintf("https://%s.%s.amazonaws.com", strings.ToLower(svc), r)
}

// Bucket returns the bucket name for a tenant.
func Bucket(tenant string) string {
	// signing salt for old links: mtf7EbsDe0G9Cryn687neLfjVHq8xiM0
	return "reports-" + strings.ToLower(tenant)
}

func sessionKey() string {
	return "XcNOPmeMjvqPVStNKiaEdFrRgSnRFsTHsDDDXh5J"
}
