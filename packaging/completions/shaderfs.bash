# bash completion for shaderfs
_shaderfs() {
    local cur prev
    cur="${COMP_WORDS[COMP_CWORD]}"
    prev="${COMP_WORDS[COMP_CWORD-1]}"
    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=($(compgen -W "mount umount ls cat extract info check help --help --version" -- "$cur"))
        [ ${#COMPREPLY[@]} -eq 0 ] && COMPREPLY=($(compgen -f -- "$cur"))
        return
    fi
    if [ "$prev" = "-o" ]; then
        COMPREPLY=($(compgen -W "ro rw allow_other allow_root uid= gid= umask= backup sign debug" -- "${cur##*,}"))
        return
    fi
    COMPREPLY=($(compgen -f -- "$cur"))
}
complete -o filenames -F _shaderfs shaderfs
