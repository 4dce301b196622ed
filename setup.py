"""`pip install .`: the Python package ahbm (tools/python/ahbm/) with its extension ahbm._ahbm
built by the project's CMake build (target ahbm_python), as tools/build.sh would build it.
pyproject.toml holds the metadata; docs/python.md the commands.

Environment:
  AHBM_PREBUILT_MODULE=PATH  copy this already-built extension (build/python/ahbm/_ahbm.*.so of the
                             same interpreter's build) instead of building one: what the test
                             PythonPackage.PipInstallsInAVenv does, CMake's build being done already.
  AHBM_PIP_BUILD_DIR=DIR     CMake's build tree (default: build-pip/ beside the source's build/,
                             reused by the next install; at the same depth as build/, so a compiler
                             cache with a base_dir gets its hits); setuptools' files in DIR/setuptools.
  CMAKE_BUILD_PARALLEL_LEVEL jobs of the CMake build (default: the CPU count).
  CMAKE_CXX_COMPILER_LAUNCHER e.g. ccache, passed to CMake's configure.
"""
import glob
import os
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))
BUILD = os.path.abspath(os.environ.get("AHBM_PIP_BUILD_DIR") or os.path.join(ROOT, "build-pip"))
SETUPTOOLS = os.path.join(BUILD, "setuptools")


def version():
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        return re.search(r"project\(\s*\w+\s+VERSION\s+([0-9.]+)", f.read()).group(1)


class CMakeBuild(build_ext):
    """Builds (or copies, AHBM_PREBUILT_MODULE) the extension ahbm._ahbm into the package."""

    def build_extension(self, ext):
        dest = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        built = os.environ.get("AHBM_PREBUILT_MODULE")
        if not built:
            built = self.cmake_build()
        elif not os.path.isfile(built):
            sys.exit(f"setup.py: AHBM_PREBUILT_MODULE={built}: no such file")
        shutil.copyfile(built, dest)

    def cmake_build(self):
        tree = BUILD
        configure = ["cmake", "-S", ROOT, "-B", tree, "-DCMAKE_BUILD_TYPE=Release",
                     f"-DAHBM_PYTHON={sys.executable}"]
        if os.environ.get("CMAKE_CXX_COMPILER_LAUNCHER"):
            configure.append(f"-DCMAKE_CXX_COMPILER_LAUNCHER={os.environ['CMAKE_CXX_COMPILER_LAUNCHER']}")
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
        subprocess.run(configure, check=True)
        subprocess.run(["cmake", "--build", tree, "--target", "ahbm_python", "-j", jobs], check=True)
        found = glob.glob(os.path.join(tree, "python", "ahbm", "_ahbm*.so"))
        if len(found) != 1:
            sys.exit(f"setup.py: the CMake build left {found or 'no'} ahbm/_ahbm*.so in {tree}/python "
                     "(is pybind11-dev installed? tools/setup.sh)")
        return found[0]


os.makedirs(SETUPTOOLS, exist_ok=True)
setup(
    version=version(),
    packages=["ahbm"],
    package_dir={"": "tools/python"},
    package_data={"ahbm": ["__init__.pyi", "py.typed"]},
    ext_modules=[Extension("ahbm._ahbm", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": SETUPTOOLS}, "egg_info": {"egg_base": SETUPTOOLS}},
    zip_safe=False,
)
