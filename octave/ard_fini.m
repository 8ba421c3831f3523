function ard_fini()
  % ard_fini() closes every port and forgets the options: ard_init may be called again.
  %   Clearing the MEX file (clear ardnet_mex, clear functions, clear all; MATLAB's
  %   clear mex) or leaving the interpreter does the same.
  ardnet_mex ('fini');
end
