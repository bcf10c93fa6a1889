# Sourced (`. scripts/device-env.sh`) on a machine that received this tree with .deps/debs from
# `scripts/fetch-deps.sh --all` and has no OpenBLAS, LAPACKE or MPI of its own (a GPU machine
# without network): unpacks the packages once into /tmp/tessera-deps, points .deps/usr there,
# and sets the paths for CMake, the loader and Open MPI's relocated tree (OPAL_PREFIX).
_tsr_root=/tmp/tessera-deps
mkdir -p "$_tsr_root/.unpacked" "$_tsr_root/bin"
for _tsr_deb in .deps/debs/*.deb; do
  _tsr_name=$(basename "$_tsr_deb")
  [ -e "$_tsr_root/.unpacked/$_tsr_name" ] ||
    { dpkg -x "$_tsr_deb" "$_tsr_root" && touch "$_tsr_root/.unpacked/$_tsr_name"; }
done
_tsr_lib=$_tsr_root/usr/lib/x86_64-linux-gnu
for _tsr_tool in mpicc mpirun mpiexec; do
  ln -sf "$_tsr_root/usr/bin/$_tsr_tool.openmpi" "$_tsr_root/bin/$_tsr_tool"
done
for _tsr_so in libopenblas.so.0 libblas.so.3 liblapack.so.3; do
  ln -sf "$_tsr_lib/openblas-pthread/$_tsr_so" "$_tsr_lib/$_tsr_so"
done
[ -L .deps/usr ] || rm -rf .deps/usr
ln -sfn "$_tsr_root/usr" .deps/usr
export OPAL_PREFIX=$_tsr_root/usr PATH=$_tsr_root/bin:$PATH
export LD_LIBRARY_PATH=$_tsr_lib:$_tsr_lib/openblas-pthread:$_tsr_lib/openmpi/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
export OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 OMPI_MCA_plm_rsh_agent=
unset _tsr_root _tsr_lib _tsr_deb _tsr_name _tsr_tool _tsr_so
