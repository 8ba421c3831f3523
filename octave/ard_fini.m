function ard_fini()
  % ard_fini() closes every port and forgets the options: ard_init may be called again.
  %   `clear mex` (or clear functions, clear all, leaving Octave) does the same.
  ardnet_mex ('fini');
end
