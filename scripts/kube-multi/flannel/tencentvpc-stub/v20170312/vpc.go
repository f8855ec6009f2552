// Package v20170312 stands in for the Tencent Cloud VPC API client that flannel's tencent-vpc
// backend calls. It declares only what that backend uses; every call returns ErrUnavailable, so
// a flanneld built with it fails clearly if that backend is ever configured.
package v20170312

import "errors"

// ErrUnavailable is what every call returns.
var ErrUnavailable = errors.New("tencent-vpc backend not available: built with a stub SDK (boxbench scripts/kube-multi/flannel)")

type Client struct{}

func NewClientWithSecretId(secretID, secretKey, region string) (*Client, error) {
	return nil, ErrUnavailable
}

type Filter struct {
	Name   *string
	Values []*string
}

type Route struct {
	DestinationCidrBlock *string
	GatewayType          *string
	GatewayId            *string
	RouteId              *uint64
	RouteType            *string
	Enabled              *bool
}

type RouteTable struct {
	RouteTableId *string
	RouteSet     []*Route
}

type DescribeRouteTablesRequest struct{ Filters []*Filter }

type DescribeRouteTablesResponse struct {
	Response *struct{ RouteTableSet []*RouteTable }
}

type RoutesRequest struct {
	RouteTableId *string
	Routes       []*Route
}

type RoutesResponse struct{}

func NewDescribeRouteTablesRequest() *DescribeRouteTablesRequest {
	return &DescribeRouteTablesRequest{}
}
func NewDeleteRoutesRequest() *RoutesRequest { return &RoutesRequest{} }
func NewCreateRoutesRequest() *RoutesRequest { return &RoutesRequest{} }

func (c *Client) DescribeRouteTables(*DescribeRouteTablesRequest) (*DescribeRouteTablesResponse, error) {
	return nil, ErrUnavailable
}
func (c *Client) DeleteRoutes(*RoutesRequest) (*RoutesResponse, error) { return nil, ErrUnavailable }
func (c *Client) CreateRoutes(*RoutesRequest) (*RoutesResponse, error) { return nil, ErrUnavailable }
