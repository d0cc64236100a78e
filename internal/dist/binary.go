package main

import (
	"bytes"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"fmt"
)

// checkBinary tells whether data is an executable for t: ELF for Linux
// (OS ABI "none") and FreeBSD (OS ABI FreeBSD, which Go's linker writes),
// Mach-O for macOS, PE (a console program) for Windows, each for t's
// architecture. It returns what it found, e.g. "ELF 64-bit x86-64 (linux)".
func checkBinary(data []byte, t target) (string, error) {
	switch t.GOOS {
	case "linux", "freebsd":
		return checkELF(data, t)
	case "darwin":
		return checkMachO(data, t)
	case "windows":
		return checkPE(data, t)
	}
	return "", fmt.Errorf("no format check for %s", t)
}

func checkELF(data []byte, t target) (string, error) {
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return "", fmt.Errorf("not an ELF file, as %s needs: %w", t, err)
	}
	machine := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[t.GOARCH]
	abi := map[string]elf.OSABI{"linux": elf.ELFOSABI_NONE, "freebsd": elf.ELFOSABI_FREEBSD}[t.GOOS]
	got := fmt.Sprintf("ELF %s %s %s %s", f.Class, f.Machine, f.OSABI, f.Type)
	switch {
	case f.Class != elf.ELFCLASS64:
		return got, fmt.Errorf("%s: want a 64-bit ELF for %s", got, t)
	case f.Machine != machine:
		return got, fmt.Errorf("%s: want machine %s for %s", got, machine, t)
	case f.OSABI != abi:
		return got, fmt.Errorf("%s: want OS ABI %s for %s", got, abi, t)
	case f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN:
		return got, fmt.Errorf("%s: not an executable", got)
	}
	return got, nil
}

func checkMachO(data []byte, t target) (string, error) {
	f, err := macho.NewFile(bytes.NewReader(data))
	if err != nil {
		return "", fmt.Errorf("not a Mach-O file, as %s needs: %w", t, err)
	}
	cpu := map[string]macho.Cpu{"amd64": macho.CpuAmd64, "arm64": macho.CpuArm64}[t.GOARCH]
	got := fmt.Sprintf("Mach-O %s %s", f.Cpu, f.Type)
	switch {
	case f.Magic != macho.Magic64:
		return got, fmt.Errorf("%s: want a 64-bit Mach-O for %s", got, t)
	case f.Cpu != cpu:
		return got, fmt.Errorf("%s: want CPU %s for %s", got, cpu, t)
	case f.Type != macho.TypeExec:
		return got, fmt.Errorf("%s: not an executable", got)
	}
	return got, nil
}

func checkPE(data []byte, t target) (string, error) {
	f, err := pe.NewFile(bytes.NewReader(data))
	if err != nil {
		return "", fmt.Errorf("not a PE file, as %s needs: %w", t, err)
	}
	machine := map[string]uint16{"amd64": pe.IMAGE_FILE_MACHINE_AMD64, "arm64": pe.IMAGE_FILE_MACHINE_ARM64}[t.GOARCH]
	opt, ok := f.OptionalHeader.(*pe.OptionalHeader64)
	got := fmt.Sprintf("PE machine %#x", f.Machine)
	if ok {
		got += fmt.Sprintf(" PE32+ subsystem %d", opt.Subsystem)
	}
	switch {
	case f.Machine != machine:
		return got, fmt.Errorf("%s: want machine %#x for %s", got, machine, t)
	case !ok:
		return got, fmt.Errorf("%s: want a PE32+ (64-bit) optional header for %s", got, t)
	case f.Characteristics&pe.IMAGE_FILE_EXECUTABLE_IMAGE == 0:
		return got, fmt.Errorf("%s: not an executable image", got)
	case opt.Subsystem != pe.IMAGE_SUBSYSTEM_WINDOWS_CUI:
		return got, fmt.Errorf("%s: want a console program (subsystem %d)", got, pe.IMAGE_SUBSYSTEM_WINDOWS_CUI)
	}
	return got, nil
}
