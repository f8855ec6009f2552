// A stand-in for the Tencent Cloud VPC SDK (not served by the module proxy): just the names
// flannel's tencent-vpc backend uses, each call failing. See ../go.mod.
module github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/vpc

go 1.22
