{
  grafanaDashboards+:: {},
}
