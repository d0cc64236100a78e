package main

import (
	"bytes"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"encoding/binary"
	"os"
	"runtime"
	"testing"
)

// The smallest headers each parser accepts, written the way the linkers
// write them for each target.
func elfHeader(t *testing.T, machine elf.Machine, abi elf.OSABI) []byte {
	h := elf.Header64{Type: uint16(elf.ET_EXEC), Machine: uint16(machine), Version: 1, Ehsize: 64, Phentsize: 56, Shentsize: 64}
	copy(h.Ident[:], elf.ELFMAG)
	h.Ident[elf.EI_CLASS] = byte(elf.ELFCLASS64)
	h.Ident[elf.EI_DATA] = byte(elf.ELFDATA2LSB)
	h.Ident[elf.EI_VERSION] = byte(elf.EV_CURRENT)
	h.Ident[elf.EI_OSABI] = byte(abi)
	return encode(t, h)
}

func machoHeader(t *testing.T, cpu macho.Cpu) []byte {
	h := macho.FileHeader{Magic: macho.Magic64, Cpu: cpu, Type: macho.TypeExec}
	return append(encode(t, h), 0, 0, 0, 0) // the 64-bit header's reserved word
}

func peHeader(t *testing.T, machine uint16) []byte {
	dos := make([]byte, 0x40)
	copy(dos, "MZ")
	binary.LittleEndian.PutUint32(dos[0x3c:], 0x40)
	opt := pe.OptionalHeader64{Magic: 0x20b, Subsystem: pe.IMAGE_SUBSYSTEM_WINDOWS_CUI, NumberOfRvaAndSizes: 16}
	fh := pe.FileHeader{Machine: machine, SizeOfOptionalHeader: uint16(binary.Size(opt)),
		Characteristics: pe.IMAGE_FILE_EXECUTABLE_IMAGE | pe.IMAGE_FILE_LARGE_ADDRESS_AWARE}
	out := append(dos, "PE\x00\x00"...)
	out = append(out, encode(t, fh)...)
	return append(out, encode(t, opt)...)
}

func encode(t *testing.T, v any) []byte {
	var b bytes.Buffer
	if err := binary.Write(&b, binary.LittleEndian, v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// Each target's header passes for that target and fails for every other.
func TestCheckBinaryTellsEveryTargetApart(t *testing.T) {
	headers := map[target][]byte{
		{"linux", "amd64"}:   elfHeader(t, elf.EM_X86_64, elf.ELFOSABI_NONE),
		{"linux", "arm64"}:   elfHeader(t, elf.EM_AARCH64, elf.ELFOSABI_NONE),
		{"freebsd", "amd64"}: elfHeader(t, elf.EM_X86_64, elf.ELFOSABI_FREEBSD),
		{"darwin", "amd64"}:  machoHeader(t, macho.CpuAmd64),
		{"darwin", "arm64"}:  machoHeader(t, macho.CpuArm64),
		{"windows", "amd64"}: peHeader(t, pe.IMAGE_FILE_MACHINE_AMD64),
		{"windows", "arm64"}: peHeader(t, pe.IMAGE_FILE_MACHINE_ARM64),
	}
	if len(headers) != len(targets) {
		t.Fatalf("%d headers for %d targets", len(headers), len(targets))
	}
	for built, data := range headers {
		for _, want := range targets {
			got, err := checkBinary(data, want)
			if built == want && err != nil {
				t.Errorf("the %s header fails its own check: %v", built, err)
			}
			if built != want && err == nil {
				t.Errorf("the %s header (%s) passes as %s", built, got, want)
			}
		}
	}
}

func TestCheckBinaryRefusesWhatIsNoExecutable(t *testing.T) {
	lib := elfHeader(t, elf.EM_X86_64, elf.ELFOSABI_NONE)
	lib[16] = byte(elf.ET_REL) // an object file
	dll := peHeader(t, pe.IMAGE_FILE_MACHINE_AMD64)
	gui := bytes.Clone(dll)
	binary.LittleEndian.PutUint16(gui[0x40+4+18:], 0) // no IMAGE_FILE_EXECUTABLE_IMAGE
	tests := []struct {
		name string
		data []byte
		t    target
	}{
		{"text", []byte("#!/bin/sh\necho quire\n"), target{"linux", "amd64"}},
		{"an ELF object file", lib, target{"linux", "amd64"}},
		{"a PE that is not an executable image", gui, target{"windows", "amd64"}},
		{"an empty file", nil, target{"darwin", "arm64"}},
		{"an unknown system", lib, target{"plan9", "amd64"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := checkBinary(tt.data, tt.t); err == nil {
				t.Fatalf("checkBinary = %q, want an error", got)
			}
		})
	}
}

// A real Go executable, the test binary itself, passes for the platform
// it runs on.
func TestCheckBinaryOfARealExecutable(t *testing.T) {
	here := target{runtime.GOOS, runtime.GOARCH}
	if !known(here) {
		t.Skipf("%s is not a release target", here)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := checkBinary(data, here); err != nil {
		t.Fatalf("the test binary (%s) fails the %s check: %v", got, here, err)
	}
}
