; Leasedesk's per-user Windows installer, built on Linux by `cargo xtask bundle`
; with Debian's makensis (3.08) and only the plugins it ships (System, nsExec).
; Our own script rather than Tauri's NSIS bundler: that one needs tauri-cli and
; downloads its nsis_tauri_utils plugin from GitHub while it builds, which the
; build machines cannot reach.
;
; Defines (makensis -D...): VERSION (x.y.z), BIN (the folder of leasedesk-app.exe,
; leasedesk.exe and WebView2Loader.dll), ICONS (the repository's icons/),
; OUTFILE, and optionally COMPRESSION (lzma, the default, zlib or off).
;
; Command line: /S installs silently, /AUTOSTART starts Leasedesk at sign-in
; (the finish page has a checkbox for it), /D=FOLDER installs elsewhere.
; What it logs (the WebView2 Runtime's fetch, above all) also goes to
; %TEMP%\Leasedesk-Setup.log, for silent installs.
;
; It puts the installation folder on the user's own PATH (HKCU\Environment),
; so that `leasedesk` is a command in new terminals, and the uninstaller takes
; it away again (see AddToUserPath).
;
; It never touches the user's data (%APPDATA% and %LOCALAPPDATA%'s Leasedesk
; and dev.leasedesk.desk) or workspace (%USERPROFILE%\Leasedesk); nor does
; the uninstaller.

Unicode true
; 64-bit, like the app: $SYSDIR is then the real System32 (where curl.exe is),
; and Debian's Wine, which the tests install it with, runs no 32-bit program.
Target amd64-unicode
!ifndef COMPRESSION
  !define COMPRESSION lzma
!endif
!if "${COMPRESSION}" == "off"
  SetCompress off
!else
  SetCompressor /SOLID ${COMPRESSION}
!endif
ManifestDPIAware true
; Per user: no administrator, no UAC prompt.
RequestExecutionLevel user

!define PRODUCT "Leasedesk"
!define PUBLISHER "Leasedesk"
!define AUMID "dev.leasedesk.desk"
!define APP_EXE "leasedesk-app.exe"
!define UNINSTALL_KEY "Software\Microsoft\Windows\CurrentVersion\Uninstall\${PRODUCT}"
!define AUMID_KEY "Software\Classes\AppUserModelId\${AUMID}"
!define RUN_KEY "Software\Microsoft\Windows\CurrentVersion\Run"
; The user's own environment variables; its Path is added to the system's.
!define ENV_KEY "Environment"
; leasedesk://join?… (an invite) opens the app: the scheme, per user.
!define SCHEME_KEY "Software\Classes\leasedesk"
!define WEBVIEW2_CLIENT "Microsoft\EdgeUpdate\Clients\{F3017226-FE2A-4295-8BDF-00C3A9A7E4C5}"
!define WEBVIEW2_BOOTSTRAPPER "https://go.microsoft.com/fwlink/p/?LinkId=2124703"

Name "${PRODUCT}"
OutFile "${OUTFILE}"
InstallDir "$LOCALAPPDATA\Programs\${PRODUCT}"
InstallDirRegKey HKCU "${UNINSTALL_KEY}" "InstallLocation"
Icon "${ICONS}/icon.ico"
UninstallIcon "${ICONS}/icon.ico"
VIProductVersion "${VERSION}.0"
VIAddVersionKey "ProductName" "${PRODUCT}"
VIAddVersionKey "ProductVersion" "${VERSION}"
VIAddVersionKey "FileVersion" "${VERSION}"
VIAddVersionKey "CompanyName" "${PUBLISHER}"
VIAddVersionKey "FileDescription" "${PRODUCT} Setup"
VIAddVersionKey "LegalCopyright" "${PUBLISHER}"

!include MUI2.nsh
!include LogicLib.nsh
!include FileFunc.nsh
!include Win\COM.nsh
!include Win\Propkey.nsh
!include WinMessages.nsh

!define MUI_ICON "${ICONS}/icon.ico"
!define MUI_UNICON "${ICONS}/icon.ico"
!define MUI_ABORTWARNING
!define MUI_FINISHPAGE_RUN "$INSTDIR\${APP_EXE}"
!define MUI_FINISHPAGE_RUN_TEXT "Start ${PRODUCT} now"
; The finish page's second checkbox (meant for a readme) turns autostart on.
!define MUI_FINISHPAGE_SHOWREADME ""
!define MUI_FINISHPAGE_SHOWREADME_TEXT "Start ${PRODUCT} when I sign in"
!define MUI_FINISHPAGE_SHOWREADME_NOTCHECKED
!define MUI_FINISHPAGE_SHOWREADME_FUNCTION EnableAutostart
!insertmacro MUI_PAGE_DIRECTORY
!insertmacro MUI_PAGE_INSTFILES
!insertmacro MUI_PAGE_FINISH
!insertmacro MUI_UNPAGE_CONFIRM
!insertmacro MUI_UNPAGE_INSTFILES
!insertmacro MUI_LANGUAGE "English"

; Shown in the details, and appended to %TEMP%\Leasedesk-Setup.log, which a
; silent install leaves as its only account.
!macro Log text
  DetailPrint "${text}"
  Push $9
  FileOpen $9 "$TEMP\${PRODUCT}-Setup.log" a
  ${If} $9 != ""
    FileSeek $9 0 END
    FileWriteUTF16LE /BOM $9 "${text}$\r$\n"
    FileClose $9
  ${EndIf}
  Pop $9
!macroend

Function EnableAutostart
  WriteRegStr HKCU "${RUN_KEY}" "${PRODUCT}" '"$INSTDIR\${APP_EXE}"'
FunctionEnd

; The user's PATH, in plain NSIS (no plugin to download). NSIS strings hold
; NSIS_MAX_STRLEN characters (1024 in Debian's makensis), and ReadRegStr
; answers "" for a longer value: a script that then writes "" plus its own
; folder empties the user's PATH. So a PATH that cannot be read whole, or
; would not fit with our folder, is left as it is, and the log says so.
; The value stays REG_EXPAND_SZ, its entries unexpanded (%USERPROFILE%\bin).
!define PATH_TOO_LONG "Your PATH (HKCU\${ENV_KEY}\Path) is too long for this installer to change safely, and is left as it was. To use the leasedesk command, add $INSTDIR to it yourself."
!macro UserPathFunctions un
; Reads HKCU\Environment\Path into $R1; $R0 says what was found: "read" (all
; of it), "none" (the user has no PATH of their own), or "unreadable" (there
; is one, too long for NSIS's strings or not a string).
Function ${un}ReadUserPath
  Push $0
  Push $1
  ClearErrors
  ReadRegStr $R1 HKCU "${ENV_KEY}" "Path"
  ${IfNot} ${Errors}
    StrCpy $R0 "read"
  ${Else}
    ; Not read: absent, or there and unreadable?
    StrCpy $R0 "none"
    StrCpy $R1 ""
    StrCpy $0 0
    ${Do}
      ClearErrors
      EnumRegValue $1 HKCU "${ENV_KEY}" $0
      ${If} ${Errors}
      ${OrIf} $1 == ""
        ${ExitDo}
      ${EndIf}
      ${If} $1 == "Path"
        StrCpy $R0 "unreadable"
        ${ExitDo}
      ${EndIf}
      IntOp $0 $0 + 1
    ${Loop}
  ${EndIf}
  Pop $1
  Pop $0
FunctionEnd

; Splits the PATH in $R1 at its semicolons: $R2 is it without the entries
; that name $INSTDIR (in any case, with or without a final backslash), the
; others kept in order, empty ones too; $R3 is how many there were.
Function ${un}WithoutOurEntry
  Push $0 ; where in $R1
  Push $1 ; the character there
  Push $2 ; the entry so far
  Push $3 ; entries kept
  StrCpy $R2 ""
  StrCpy $R3 0
  StrCpy $0 0
  StrCpy $2 ""
  StrCpy $3 0
  ${Do}
    StrCpy $1 $R1 1 $0
    ${If} $1 == ";"
    ${OrIf} $1 == ""
      ; StrCmp (==) ignores case, as Windows' paths do.
      ${If} $2 == $INSTDIR
      ${OrIf} $2 == "$INSTDIR\"
        IntOp $R3 $R3 + 1
      ${Else}
        ${If} $3 > 0
          StrCpy $R2 "$R2;"
        ${EndIf}
        StrCpy $R2 "$R2$2"
        IntOp $3 $3 + 1
      ${EndIf}
      ${If} $1 == ""
        ${ExitDo}
      ${EndIf}
      StrCpy $2 ""
    ${Else}
      StrCpy $2 "$2$1"
    ${EndIf}
    IntOp $0 $0 + 1
  ${Loop}
  Pop $3
  Pop $2
  Pop $1
  Pop $0
FunctionEnd

; Tells running programs (Explorer above all, which starts the terminals)
; that the environment changed, so that new terminals see the new PATH. A
; hung window is not waited for.
Function ${un}AnnounceEnvironment
  Push $0
  System::Call 'user32::SendMessageTimeoutW(p ${HWND_BROADCAST}, i ${WM_SETTINGCHANGE}, p 0, w "Environment", i 0x2, i 5000, *p .r0)'
  Pop $0
FunctionEnd
!macroend
!insertmacro UserPathFunctions ""
!insertmacro UserPathFunctions "un."

; Puts $INSTDIR at the end of the user's own PATH, unless it is there
; already (a second install, an upgrade).
Function AddToUserPath
  Push $0
  Push $1
  Push $R0
  Push $R1
  Push $R2
  Push $R3
  Call ReadUserPath
  ${If} $R0 == "unreadable"
    !insertmacro Log "${PATH_TOO_LONG}"
  ${Else}
    Call WithoutOurEntry
    ; The new PATH's length: the old, a semicolon and ours (and it needs
    ; room for its terminating null).
    StrLen $0 $R1
    StrLen $1 $INSTDIR
    IntOp $0 $0 + $1
    IntOp $0 $0 + 1
    ${If} $R3 > 0
      !insertmacro Log "$INSTDIR is on your PATH already."
    ${ElseIf} $0 >= ${NSIS_MAX_STRLEN}
      !insertmacro Log "${PATH_TOO_LONG}"
    ${Else}
      StrCpy $1 $R1 1 -1
      ${If} $R1 == ""
      ${OrIf} $1 == ";"
        StrCpy $R1 "$R1$INSTDIR"
      ${Else}
        StrCpy $R1 "$R1;$INSTDIR"
      ${EndIf}
      ClearErrors
      WriteRegExpandStr HKCU "${ENV_KEY}" "Path" $R1
      ${If} ${Errors}
        !insertmacro Log "Could not add $INSTDIR to your PATH."
      ${Else}
        !insertmacro Log "Added $INSTDIR to your PATH: the leasedesk command works in new terminals."
        Call AnnounceEnvironment
      ${EndIf}
    ${EndIf}
  ${EndIf}
  Pop $R3
  Pop $R2
  Pop $R1
  Pop $R0
  Pop $1
  Pop $0
FunctionEnd

; Takes $INSTDIR out of the user's PATH again, every other entry kept in its
; place. A PATH of ours alone goes with it.
Function un.RemoveFromUserPath
  Push $R0
  Push $R1
  Push $R2
  Push $R3
  Call un.ReadUserPath
  ${If} $R0 == "unreadable"
    !insertmacro Log "Your PATH (HKCU\${ENV_KEY}\Path) is too long for this uninstaller to change safely, and is left as it was: take $INSTDIR out of it yourself."
  ${ElseIf} $R0 == "read"
    Call un.WithoutOurEntry
    ${If} $R3 > 0
      ${If} $R2 == ""
        DeleteRegValue HKCU "${ENV_KEY}" "Path"
      ${Else}
        WriteRegExpandStr HKCU "${ENV_KEY}" "Path" $R2
      ${EndIf}
      !insertmacro Log "Took $INSTDIR out of your PATH."
      Call un.AnnounceEnvironment
    ${EndIf}
  ${EndIf}
  Pop $R3
  Pop $R2
  Pop $R1
  Pop $R0
FunctionEnd

; Gives the Start-menu shortcut the AppUserModelID the app's toasts carry, as
; Windows wants for a desktop app's notifications (the registry's
; AppUserModelId key is the other half): COM through the System plugin, as
; Win\COM.nsh shows. (Wine's shell links ignore the property, so only Windows
; can show it took.)
Function SetShortcutAumid
  Exch $0 ; the shortcut
  Push $1
  Push $2
  Push $3
  Push $4
  Push $5
  Push $6
  StrCpy $5 -1
  !insertmacro ComHlpr_CreateInProcInstance ${CLSID_ShellLink} ${IID_IShellLink} r1 ""
  ${If} $1 P<> 0
    ${IUnknown::QueryInterface} $1 '("${IID_IPersistFile}",.r2)'
    ${IUnknown::QueryInterface} $1 '("${IID_IPropertyStore}",.r3)'
    ${If} $2 P<> 0
    ${AndIf} $3 P<> 0
      ${IPersistFile::Load} $2 '("$0",${STGM_READWRITE}).r5'
      ${If} $5 = 0
        System::Call '*${SYSSTRUCT_PROPERTYKEY}(${PKEY_AppUserModel_ID})p.r4'
        System::Call '*(&w${NSIS_MAX_STRLEN} "${AUMID}")p.r6'
        ; A PROPVARIANT of type VT_LPWSTR pointing at it.
        System::Call '*${SYSSTRUCT_PROPVARIANT}(${VT_LPWSTR},,&i8 $6)p.r6'
        ${IPropertyStore::SetValue} $3 '($4,$6).r5'
        ${If} $5 = 0
          ${IPropertyStore::Commit} $3 ".r5"
        ${EndIf}
        ${If} $5 = 0
          ${IPersistFile::Save} $2 '("$0",1).r5'
        ${EndIf}
      ${EndIf}
    ${EndIf}
    ${IfThen} $3 P<> 0 ${|} ${IUnknown::Release} $3 "" ${|}
    ${IfThen} $2 P<> 0 ${|} ${IUnknown::Release} $2 "" ${|}
    ${IUnknown::Release} $1 ""
  ${EndIf}
  ${IfNot} $5 = 0
    !insertmacro Log "Could not give the shortcut its AppUserModelID ($5)."
  ${EndIf}
  Pop $6
  Pop $5
  Pop $4
  Pop $3
  Pop $2
  Pop $1
  Pop $0
FunctionEnd

; The window is drawn by the WebView2 Runtime, part of Windows 11 and of most
; Windows 10 installs. Missing, it is fetched with Windows' own curl.exe (or
; PowerShell) and installed for this user; if that fails the app is installed
; all the same, and the log says what to do.
Function EnsureWebView2
  ReadRegStr $0 HKLM "SOFTWARE\WOW6432Node\${WEBVIEW2_CLIENT}" "pv"
  ${If} $0 == ""
  ${OrIf} $0 == "0.0.0.0"
    ReadRegStr $0 HKCU "Software\${WEBVIEW2_CLIENT}" "pv"
  ${EndIf}
  ${If} $0 != ""
  ${AndIf} $0 != "0.0.0.0"
    !insertmacro Log "WebView2 Runtime $0 found."
    Return
  ${EndIf}
  !insertmacro Log "No WebView2 Runtime: downloading its installer."
  StrCpy $1 "$TEMP\MicrosoftEdgeWebview2Setup.exe"
  Delete $1
  ${If} ${FileExists} "$SYSDIR\curl.exe"
    nsExec::ExecToLog '"$SYSDIR\curl.exe" --fail --silent --show-error --location --max-time 300 --output "$1" "${WEBVIEW2_BOOTSTRAPPER}"'
  ${Else}
    nsExec::ExecToLog '"$SYSDIR\WindowsPowerShell\v1.0\powershell.exe" -NoProfile -NonInteractive -Command "Invoke-WebRequest -UseBasicParsing -Uri $\'${WEBVIEW2_BOOTSTRAPPER}$\' -OutFile $\'$1$\'"'
  ${EndIf}
  Pop $2
  ${If} $2 != 0
  ${OrIfNot} ${FileExists} $1
    !insertmacro Log "Could not download the WebView2 Runtime (the download ended with $2). ${PRODUCT} needs it for its window: install it from https://go.microsoft.com/fwlink/p/?LinkId=2124703 and start ${PRODUCT} again."
    MessageBox MB_OK|MB_ICONEXCLAMATION "Could not download the Microsoft Edge WebView2 Runtime, which ${PRODUCT}'s window needs.$\r$\n$\r$\nInstall it from https://go.microsoft.com/fwlink/p/?LinkId=2124703 and start ${PRODUCT} again." /SD IDOK
    Return
  ${EndIf}
  ExecWait '"$1" /silent /install' $2
  Delete $1
  ${If} $2 = 0
    !insertmacro Log "WebView2 Runtime installed."
  ${Else}
    !insertmacro Log "The WebView2 Runtime's installer failed (exit code $2). Install it from https://go.microsoft.com/fwlink/p/?LinkId=2124703 and start ${PRODUCT} again."
    MessageBox MB_OK|MB_ICONEXCLAMATION "The Microsoft Edge WebView2 Runtime, which ${PRODUCT}'s window needs, did not install (exit code $2).$\r$\n$\r$\nInstall it from https://go.microsoft.com/fwlink/p/?LinkId=2124703 and start ${PRODUCT} again." /SD IDOK
  ${EndIf}
FunctionEnd

Section "Install"
  !insertmacro Log "Installing ${PRODUCT} ${VERSION} in $INSTDIR."
  SetOutPath "$INSTDIR"
  File "${BIN}/${APP_EXE}"
  File "${BIN}/leasedesk.exe"
  File "${BIN}/WebView2Loader.dll"
  File "/oname=leasedesk.png" "${ICONS}/128x128@2x.png"
  WriteUninstaller "$INSTDIR\uninstall.exe"

  CreateShortCut "$SMPROGRAMS\${PRODUCT}.lnk" "$INSTDIR\${APP_EXE}" "" "$INSTDIR\${APP_EXE}" 0
  Push "$SMPROGRAMS\${PRODUCT}.lnk"
  Call SetShortcutAumid
  ; Toasts show under this name and icon (Windows 10 and 11).
  WriteRegStr HKCU "${AUMID_KEY}" "DisplayName" "${PRODUCT}"
  WriteRegStr HKCU "${AUMID_KEY}" "IconUri" "$INSTDIR\leasedesk.png"

  ; Invite links (leasedesk://join?server=…&code=…) open the app, which
  ; takes the link from its command line (or hands it to the running one).
  WriteRegStr HKCU "${SCHEME_KEY}" "" "URL:Leasedesk invite"
  WriteRegStr HKCU "${SCHEME_KEY}" "URL Protocol" ""
  WriteRegStr HKCU "${SCHEME_KEY}\DefaultIcon" "" '"$INSTDIR\${APP_EXE}",0'
  WriteRegStr HKCU "${SCHEME_KEY}\shell\open\command" "" '"$INSTDIR\${APP_EXE}" "%1"'

  ; Apps & features (Add or remove programs).
  WriteRegStr HKCU "${UNINSTALL_KEY}" "DisplayName" "${PRODUCT}"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "DisplayVersion" "${VERSION}"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "Publisher" "${PUBLISHER}"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "DisplayIcon" '"$INSTDIR\${APP_EXE}",0'
  WriteRegStr HKCU "${UNINSTALL_KEY}" "InstallLocation" "$INSTDIR"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "UninstallString" '"$INSTDIR\uninstall.exe"'
  WriteRegStr HKCU "${UNINSTALL_KEY}" "QuietUninstallString" '"$INSTDIR\uninstall.exe" /S'
  WriteRegDWORD HKCU "${UNINSTALL_KEY}" "NoModify" 1
  WriteRegDWORD HKCU "${UNINSTALL_KEY}" "NoRepair" 1
  ${GetSize} "$INSTDIR" "/S=0K" $0 $1 $2
  WriteRegDWORD HKCU "${UNINSTALL_KEY}" "EstimatedSize" $0

  ; `leasedesk` in a new terminal.
  Call AddToUserPath

  ${GetParameters} $0
  ClearErrors
  ${GetOptions} $0 "/AUTOSTART" $1
  ${IfNot} ${Errors}
    Call EnableAutostart
  ${EndIf}

  Call EnsureWebView2
SectionEnd

; Removes what the installer put there, by name: never the folder with what
; is in it (it may be one the user chose), never the user's data or workspace.
Section "Uninstall"
  Call un.RemoveFromUserPath
  DeleteRegValue HKCU "${RUN_KEY}" "${PRODUCT}"
  DeleteRegKey HKCU "${AUMID_KEY}"
  DeleteRegKey HKCU "${SCHEME_KEY}"
  DeleteRegKey HKCU "${UNINSTALL_KEY}"
  Delete "$SMPROGRAMS\${PRODUCT}.lnk"
  Delete "$INSTDIR\${APP_EXE}"
  Delete "$INSTDIR\leasedesk.exe"
  Delete "$INSTDIR\WebView2Loader.dll"
  Delete "$INSTDIR\leasedesk.png"
  Delete "$INSTDIR\uninstall.exe"
  ; Last: the test waits for the folder to go.
  RMDir "$INSTDIR"
SectionEnd
