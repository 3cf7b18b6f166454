//go:build !unix

package fsx

// MapFile returns the content of a file (read into memory on this system)
// and a function to call when done with it.
func MapFile(path string) (data []byte, release func(), err error) {
	data, err = ReadRegular(path)
	return data, func() {}, err
}
