"""Rubric packs: the pack files in this folder and the library that looks entries up."""

from rubrics.packs.library import DEFAULT_PACKS, PackEntry, PackLibrary

__all__ = ["DEFAULT_PACKS", "PackEntry", "PackLibrary"]
