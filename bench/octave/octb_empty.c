/*
 * octb_empty - an empty MEX function: the floor of any call into a MEX file, for
 * bench/octave/octbench.m. It touches neither its arguments nor its outputs.
 */
#include "mex.h"

void mexFunction(int nlhs, mxArray *plhs[], int nrhs, const mxArray *prhs[])
{
    (void)nlhs, (void)plhs, (void)nrhs, (void)prhs;
}
